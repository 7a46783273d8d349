package main

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn2x0[string, func(int, string)](&shardOf{})
	register.Emitter2[int, string]()
	register.DoFn3x1[context.Context, int, func(*string) bool, error](&shardWriter{})
	register.Iter1[string]()
}

// writeShards writes the lines of col into n files path-00000-of-0000n…,
// each line in the shard its hash picks, one worker per shard. A shard
// that no line falls in is not written.
func writeShards(s beam.Scope, path string, n int, col beam.PCollection) {
	s = s.Scope("shards")
	keyed := beam.ParDo(s, &shardOf{N: n}, col)
	beam.ParDo0(s, &shardWriter{Path: path, N: n}, beam.GroupByKey(s, keyed))
}

// shardOf keys each line by its shard.
type shardOf struct{ N int }

// ProcessElement emits line with the number of its shard.
func (fn *shardOf) ProcessElement(line string, emit func(int, string)) {
	h := fnv.New64a()
	h.Write([]byte(line))
	emit(int(h.Sum64()>>32%uint64(fn.N)), line) // FNV's low bits follow the last byte
}

// shardName returns the name of shard k of n of path.
func shardName(path string, k, n int) string {
	return fmt.Sprintf("%s-%05d-of-%05d", path, k, n)
}

// shardWriter writes one shard's lines.
type shardWriter struct {
	Path string
	N    int
}

// ProcessElement writes the lines of shard k to a temporary file beside
// its name, then renames it there: a retried shard replaces the file.
func (fn *shardWriter) ProcessElement(_ context.Context, k int, lines func(*string) bool) error {
	name := shardName(fn.Path, k, fn.N)
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a failure; gone by the rename otherwise
	w := bufio.NewWriter(tmp)
	var l string
	for lines(&l) {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	return err
}
