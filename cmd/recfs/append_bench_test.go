package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkAppendLines runs `recfs append --create leveldb --sync --lines`
// in process on 100k lines of 99 bytes (the make bench append-cli row
// without the process start).
func BenchmarkAppendLines(b *testing.B) {
	var in bytes.Buffer
	for i := range 100_000 {
		fmt.Fprintf(&in, "%08d%090d\n", i, 0)
	}
	b.SetBytes(int64(in.Len()))
	dir := b.TempDir()
	for i := 0; b.Loop(); i++ {
		root := newRootCmd(io.Discard, io.Discard)
		root.SetIn(bytes.NewReader(in.Bytes()))
		root.SetArgs([]string{"append", "--create", "leveldb", "--sync", "--lines", filepath.Join(dir, fmt.Sprint(i))})
		if _, err := root.ExecuteContextC(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
