"""The official evaluation behind one client interface (`protocol.EvaluationClient`).

Backends: `local` (our judge-server, `local_client.local_judge_client`) and `official` (the
contest site, `official_client.HttpJudgeClient`); both speak docs/judge-api.md. The judge
service itself is the `justkernel.judge` package (`judge.server.create_judge_app`, run by
`justkernel judge-server`); this package holds only its clients and the wire format::

    client = local_judge_client(judge_dir)          # or HttpJudgeClient(JudgeClientConfig(...))
    bundle = CandidateBundle.from_project(folder, definition, team="blue", candidate_id="c7")
    sid = await client.submit(bundle)
    result = await client.wait(sid)                 # OfficialResult: points, prof_sum_us, raw
"""

from justkernel.evaluation.protocol import (
    CandidateBundle,
    EvaluationClient,
    JudgeAuthError,
    JudgeError,
    JudgeNotFound,
    JudgeQuotaError,
    JudgeRateLimited,
    JudgeRejected,
    JudgeUnavailable,
    OfficialResult,
    PointResult,
    QuotaInfo,
    SubmissionStatus,
)

__all__ = [
    "CandidateBundle",
    "EvaluationClient",
    "JudgeAuthError",
    "JudgeError",
    "JudgeNotFound",
    "JudgeQuotaError",
    "JudgeRateLimited",
    "JudgeRejected",
    "JudgeUnavailable",
    "OfficialResult",
    "PointResult",
    "QuotaInfo",
    "SubmissionStatus",
]
