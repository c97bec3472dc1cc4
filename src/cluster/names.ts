// Kubernetes object names (apimachinery's validation): what the API server lets through, so
// what the cache may rely on.

export const SUBDOMAIN_MAX = 253;
export const LABEL_MAX = 63;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const isDnsSubdomain = (s: string) => s.length > 0 && s.length <= SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(s);
export const isDnsLabel = (s: string) => s.length > 0 && s.length <= LABEL_MAX && DNS1123_LABEL.test(s);
