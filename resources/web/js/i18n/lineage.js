// Words of the dashboard's lineage part, in English and Chinese; i18n.js merges every area's words.
export default {
  en: {},
  zh: {},
};
