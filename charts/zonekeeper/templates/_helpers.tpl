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

{{- define "zonekeeper.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
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
