module github.com/recfs/recfs

go 1.24
