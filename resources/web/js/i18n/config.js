// Words of the dashboard's configuration part (model keys, the Judger's quota field), in English
// and Chinese; i18n.js merges every area's words.
export default {
  en: {
    // a preset whose key comes from JUSTKERNEL_PROVIDER_KEYS (the key itself is never shown)
    key_from_env: "key from the environment",
    // the daily quota field left empty: no local cap (the judge's own quota still applies)
    quota_no_cap: "empty: no local cap",
    // refusals of deleting a model preset (DELETE /api/config/models/{name}), by code
    cfg_err_no_such_preset: "No model preset {name}.",
    cfg_err_offline_preset: "{name} is the offline model: it cannot be deleted.",
    cfg_err_shipped_preset: "{name} ships with the lab (models.toml): it cannot be deleted.",
    cfg_err_preset_in_use: "{name} is still used by run {run} (teams {teams}): remove those teams first.",
    // the models table's source column: where a preset is defined
    source_local: "local (models.local.toml)",
    source_public: "shipped (models.toml)",
  },
  zh: {
    key_from_env: "密钥来自环境变量",
    quota_no_cap: "留空：不设本地上限",
    cfg_err_no_such_preset: "没有名为 {name} 的模型预设。",
    cfg_err_offline_preset: "{name} 是离线模型，不能删除。",
    cfg_err_shipped_preset: "{name} 随实验室提供（models.toml），不能删除。",
    cfg_err_preset_in_use: "{name} 仍被运行 {run} 的队伍 {teams} 使用：请先移除这些队伍。",
    source_local: "本地（models.local.toml）",
    source_public: "内置（models.toml）",
  },
};
