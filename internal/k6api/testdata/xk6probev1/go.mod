module example.com/xk6probev1

go 1.26

require (
	github.com/grafana/sobek v0.0.0-20260727154728-7781506a890f
	go.k6.io/k6 v1.6.1
)
