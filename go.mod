module github.com/stepd/stepd

go 1.26.8
