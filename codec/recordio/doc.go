// Package recordio reads and writes grailbio recordio files (as
// github.com/grailbio/base/recordio writes them): the current (v2) format
// with its header, transformers (flate, zstd) and trailer, and the legacy
// packed and unpacked formats (read only). A [Scanner] walks a file once
// and yields item locations; a [Reader] reads items back through them,
// keeping decoded blocks in a shared [BlockCache]; a [Writer] writes new
// files. Crash-safe appends to existing files are package index's; the
// pieces they are built from ([Tail], [ConsistentEnd]) are here.
package recordio
