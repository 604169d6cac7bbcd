// Words of the dashboard's steps part, in English and Chinese; i18n.js merges every area's words.
export default {
  en: {},
  zh: {},
};
