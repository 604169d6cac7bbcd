// Words of the dashboard's judger part, in English and Chinese; i18n.js merges every area's words.
export default {
  en: {},
  zh: {},
};
