"""The local judge service: a separate process with its own folder and database, the only holder
of the hidden cases (docs/judge-api.md, run by `justkernel judge-server`).

It speaks the wire format of `justkernel.evaluation` (`protocol`, `submission_files`) and runs
candidates on the workers and toolchains, but never imports the lab's domain (teams, events,
the lab, agents, scheduler, judger): the lab reaches it only over HTTP, through
`evaluation.local_client`, which reads the two rendezvous files named in
`evaluation.local_judge_files`.

    server.py        the Starlette app: login, submit, status, quota, rate limits
    store.py         the judge's SQLite: submissions, exact results, best time per point
    runner.py        the queue that evaluates stored submissions one at a time
    eval.py          one evaluation on the hidden points (sandbox, the submission's toolchain:
                     ascendc-cpu by default, or cpu; one evaluator per target)
    limits.py        sliding windows and the daily quota's reset
    paths.py         the judge folder and its unguessable evaluation folder
    public.py        what clients see of a result (buckets, noised rounded times)
    hidden_cases.py  the secret seed and the 15 hidden points drawn from it
"""
