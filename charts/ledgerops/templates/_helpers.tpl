{{- define "ledgerops.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ledgerops.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "ledgerops.fullname" .) -}}
{{- end -}}

{{/* The user name the API server gives the controller: what the admission policies compare. */}}
{{- define "ledgerops.controllerUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "ledgerops.serviceAccountName" .) -}}
{{- end -}}

{{- define "ledgerops.selectorLabels" -}}
app.kubernetes.io/name: ledgerops
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ledgerops.labels" -}}
{{ include "ledgerops.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* budgetNamespaces as a JSON list: the release namespace when empty. */}}
{{- define "ledgerops.budgetNamespaces" -}}
{{- $ns := .Values.budgetNamespaces | default (list .Release.Namespace) -}}
{{- if and (has "*" $ns) (gt (len $ns) 1) -}}
{{- fail "budgetNamespaces: \"*\" means every namespace; list no others with it" -}}
{{- end -}}
{{- /* Whoever may create Pods where the controller's ServiceAccount lives can run as it and read every token: people who propose must not edit there. */ -}}
{{- if has .Release.Namespace .Values.budgetNamespaces -}}
{{- fail (printf "budgetNamespaces lists %s, the release namespace: whoever may create Pods there can run as the controller's ServiceAccount and read every YNAB token. Install the release into a namespace of its own (e.g. ledgerops-system) that holds no Budgets" .Release.Namespace) -}}
{{- end -}}
{{- toJson $ns -}}
{{- end -}}

{{/* tokenNamespaces as a JSON list: the budget namespaces when empty (the schema refuses "*"). */}}
{{- define "ledgerops.tokenNamespaces" -}}
{{- .Values.tokenNamespaces | default (include "ledgerops.budgetNamespaces" . | fromJsonArray) | toJson -}}
{{- end -}}

{{- define "ledgerops.allTokenNamespaces" -}}
{{- if has "*" (include "ledgerops.tokenNamespaces" . | fromJsonArray) -}}true{{- end -}}
{{- end -}}

{{- define "ledgerops.allNamespaces" -}}
{{- if has "*" (include "ledgerops.budgetNamespaces" . | fromJsonArray) -}}true{{- end -}}
{{- end -}}

{{/* Where AgentJobs live: gitea.namespace, else the first budget namespace. */}}
{{- define "ledgerops.agentNamespace" -}}
{{- $ns := include "ledgerops.budgetNamespaces" . | fromJsonArray -}}
{{- if .Values.gitea.namespace -}}
{{- if and (not (include "ledgerops.allNamespaces" .)) (not (has .Values.gitea.namespace $ns)) -}}
{{- fail (printf "gitea.namespace %s must be one of budgetNamespaces %s: the controller may write AgentJobs' ConfigMaps and Events only there" .Values.gitea.namespace (toJson $ns)) -}}
{{- end -}}
{{- .Values.gitea.namespace -}}
{{- else if include "ledgerops.allNamespaces" . -}}
{{- .Release.Namespace -}}
{{- else -}}
{{- first $ns -}}
{{- end -}}
{{- end -}}

{{/* A duration such as 90s, 30m, 4h or 2d in seconds, for a PromQL comparison. */}}
{{- define "ledgerops.seconds" -}}
{{- $n := regexFind "^[0-9]+" . -}}
{{- $unit := get (dict "s" 1 "m" 60 "h" 3600 "d" 86400) (trimPrefix $n .) -}}
{{- if not $unit -}}
{{- fail (printf "%q is not a duration such as 90s, 30m, 4h or 2d" .) -}}
{{- end -}}
{{- mul (int $n) $unit -}}
{{- end -}}
