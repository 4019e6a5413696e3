module github.com/vigil-suite/vigil

go 1.26.8
