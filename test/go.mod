module github.com/recfs/recfs/test

go 1.24

require github.com/recfs/recfs v0.0.0

replace github.com/recfs/recfs => ../
