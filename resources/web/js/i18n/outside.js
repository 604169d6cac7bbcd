// Words of an outside agent's team (A2A) in the live view (js/live/outside.js), in English and
// Chinese; i18n.js merges every area's words. w_external is the fold's status of such a team.
export default {
  en: {
    w_external: "outside agent (A2A)",
    outside_none: "no action over A2A yet",
    outside_last_candidate: "last: submitted a candidate ({status}) {ago}",
    outside_last_message: "last: sent a message to {to} {ago}",
    outside_to_all: "all teams",
    outside_ago_now: "just now",
    outside_ago_min: "{n} min ago",
    outside_ago_h: "{n} h ago",
    outside_ago_d: "{n} days ago",
    outside_ago_unknown: "at an unknown time",
    outside_note: "{name} is an outside agent: it works outside the lab and reaches it over A2A (submit_candidate, ask, inbox), so it takes no turns here.",
  },
  zh: {
    w_external: "外部智能体（A2A）",
    outside_none: "尚未通过 A2A 行动",
    outside_last_candidate: "最近：{ago}提交了一个候选（{status}）",
    outside_last_message: "最近：{ago}向{to}发送了一条消息",
    outside_to_all: "所有队伍",
    outside_ago_now: "刚刚",
    outside_ago_min: "{n} 分钟前",
    outside_ago_h: "{n} 小时前",
    outside_ago_d: "{n} 天前",
    outside_ago_unknown: "在未知时间",
    outside_note: "{name} 是外部智能体：它在实验室之外工作，通过 A2A（submit_candidate、ask、inbox）与实验室交互，因此不在这里轮流执行。",
  },
};
