package main

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/recfs/recfs/beam/recfsio"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*tally)(nil)).Elem())
	register.Function1x2(perFile)
	register.Function2x1(addTally)
	register.Function2x1(formatTally)
}

// tally is what count adds up per file.
type tally struct{ Records, Bytes int64 }

// countFiles returns one line per file: FILE, records, payload bytes.
func countFiles(s beam.Scope, recs beam.PCollection) beam.PCollection {
	s = s.Scope("count")
	kv := beam.ParDo(s, perFile, recs)
	sums := beam.CombinePerKey(s, addTally, kv)
	return beam.ParDo(s, formatTally, sums)
}

func perFile(r recfsio.Record) (string, tally) {
	return r.File, tally{1, int64(len(r.Payload))}
}

func addTally(a, b tally) tally { return tally{a.Records + b.Records, a.Bytes + b.Bytes} }

func formatTally(file string, t tally) string {
	return fmt.Sprintf("%s\t%d\t%d", file, t.Records, t.Bytes)
}
