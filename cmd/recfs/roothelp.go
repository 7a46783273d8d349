package main

import (
	"strings"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decoders"
)

// formatNames returns the names of the formats recfs reads.
func formatNames() []string {
	var out []string
	for _, f := range codec.Formats() {
		out = append(out, f.String())
	}
	return out
}

// formatList joins the format names: "a, b or c" with conj "or".
func formatList(conj string) string {
	n := formatNames()
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " " + conj + " " + n[len(n)-1]
}

// rootLong is recfs --help's description. Its lists of formats and
// decoders come from the code, so they name every one.
func rootLong() string {
	return `recfs mounts record files as directories with one file per record, so ls,
cat, grep -r and cp work on them, and inspects them without FUSE (info, ls,
cat, verify, index; append adds records).

Formats (--format, detected from the first bytes by default):
  ` + formatList("and") + `
(leveldb: leveldb/RocksDB/pebble write-ahead logs and MANIFESTs, App Engine
records files; recordio and recordio-legacy: grailbio recordio; tfrecord:
plain or GZIP/ZLIB-compressed.)

Sources: a local file, a directory of them (mirrored), or an object or a
prefix in an S3-compatible store (s3://bucket/key, s3://bucket/prefix/;
--s3-endpoint, AWS_* variables).

cat and mount show records decoded as text with --decode NAME (or auto):
` + strings.TrimRight(decoders.Help(), "\n") + `

New here? "recfs sample DIR" writes sample files to try every command on;
"recfs man | man -l -" is the manual, "recfs man --install" puts it where
man finds it.

Exit status: 0 success, 1 runtime failure (or damage found by verify),
2 usage error.`
}
