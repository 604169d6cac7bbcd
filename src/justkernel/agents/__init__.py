"""Agent teams: model providers, the offline playbook model, tools and the harness."""
