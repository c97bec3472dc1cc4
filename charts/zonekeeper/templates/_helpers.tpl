{{/* Labels every object of the release carries (selectors use app.kubernetes.io/name only). */}}
{{- define "zonekeeper.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount every binding names. */}}
{{- define "zonekeeper.subject" -}}
subjects: [{kind: ServiceAccount, name: zonekeeper, namespace: {{ .Release.Namespace }}}]
{{- end }}

{{- define "zonekeeper.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
