// Words of the dashboard's judger part, in English and Chinese; i18n.js merges every area's words.
export default {
  en: {
    // the daily quota field left empty: no local cap (the judge's own quota still applies)
    quota_no_cap: "empty: no local cap",
  },
  zh: {
    quota_no_cap: "留空：不设本地上限",
  },
};
