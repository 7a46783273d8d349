module github.com/recfs/recfs

go 1.24

require (
	bazil.org/fuse v0.0.0-20230120002735-62a210ff1fd5
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/klauspost/compress v1.17.11
	github.com/sirupsen/logrus v1.10.2
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	golang.org/x/sys v0.28.0
)

require github.com/inconshreveable/mousetrap v1.1.0 // indirect
