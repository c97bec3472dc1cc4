{{/* Labels every object of the release carries (selectors use app.kubernetes.io/name only). */}}
{{- define "zonekeeper.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The pods' ServiceAccount: the chart's, or one you made (serviceAccount.create=false). */}}
{{- define "zonekeeper.serviceAccountName" -}}
{{ .Values.serviceAccount.name | default "zonekeeper" }}
{{- end }}

{{/* The ServiceAccount every binding names. */}}
{{- define "zonekeeper.subject" -}}
subjects: [{kind: ServiceAccount, name: {{ include "zonekeeper.serviceAccountName" . }}, namespace: {{ .Release.Namespace }}}]
{{- end }}

{{/* zonekeeper's image: repository@digest when image.digest is set (the tag ignored), else repository:tag. */}}
{{- /* The placeholder repository is not published: an install with it fails here, saying how to build the image, not in ImagePullBackOff. */}}
{{- define "zonekeeper.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion }}
{{- if and (eq .Values.image.repository "ghcr.io/zonekeeper/zonekeeper") (not .Values.image.allowPlaceholder) }}
{{- fail (printf "image.repository ghcr.io/zonekeeper/zonekeeper is a placeholder, not published: build the image from the repository's Dockerfile and push it where your nodes pull from (docker build -t REGISTRY/zonekeeper:%s . && docker push REGISTRY/zonekeeper:%s), then --set image.repository=REGISTRY/zonekeeper (image.allowPlaceholder=true renders the placeholder as is, for helm template and lint)" $tag $tag) }}
{{- end }}
{{- if .Values.image.digest }}
{{- .Values.image.repository }}@{{ .Values.image.digest }}
{{- else }}
{{- .Values.image.repository }}:{{ $tag }}
{{- end }}
{{- end }}

{{/* kube-scheduler of the cluster's own version (its minor decides what it supports), unless scheduler.image pins one. */}}
{{- define "zonekeeper.schedulerImage" -}}
{{- if .Values.scheduler.image }}
{{- .Values.scheduler.image }}
{{- else }}
{{- $v := semver .Capabilities.KubeVersion.Version }}
{{- printf "registry.k8s.io/kube-scheduler:v%d.%d.%d" $v.Major $v.Minor $v.Patch }}
{{- end }}
{{- end }}

{{/* The admission listener runs for admission, and standalone for the WorkloadSpread CRD's conversion webhook ("true" or ""). */}}
{{- define "zonekeeper.listener" -}}
{{- if or .Values.admission.enabled .Values.workloadSpread.standalone }}true{{ end }}
{{- end }}
