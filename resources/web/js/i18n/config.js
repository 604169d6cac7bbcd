// Words of the dashboard's configuration part (model keys, the Judger's quota field), in English
// and Chinese; i18n.js merges every area's words.
export default {
  en: {
    // a preset whose key comes from JUSTKERNEL_PROVIDER_KEYS (the key itself is never shown)
    key_from_env: "key from the environment",
    // the daily quota field left empty: no local cap (the judge's own quota still applies)
    quota_no_cap: "empty: no local cap",
  },
  zh: {
    key_from_env: "密钥来自环境变量",
    quota_no_cap: "留空：不设本地上限",
  },
};
