module github.com/stepd/stepd

go 1.26.8

require github.com/recolabs/gnata v0.2.2

require (
	github.com/tidwall/gjson v1.18.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
)
