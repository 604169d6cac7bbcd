"""The independent Judger: frozen candidates, review, nomination, submission under a daily
quota, official results, and the verified state of the art."""
