// A webhook that does nothing, in Go's standard library only: bench/webhook.py's floor under
// any webhook server (what the API server's own calls to a webhook cost on this machine when
// the server answers as fast as compiled Go can).
module instancetype.bench/noopwebhook

go 1.22
