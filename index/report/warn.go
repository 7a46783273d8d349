package report

import (
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// WarnDamaged writes one line to w when the scan of path skipped damaged
// ranges ds: the records after the first of them are numbered as found,
// so record N may not be the writer's N-th. Nothing is written for a clean
// file, nor for the stale tail of a recycled log (no record lies after it).
func WarnDamaged(w io.Writer, path string, ds []codec.Damage) {
	n, first := 0, int64(-1)
	for _, d := range ds {
		if d.Stale() {
			continue
		}
		if n == 0 {
			first = d.Off
		}
		n++
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "recfs: warning: %s is damaged (%d %s skipped, the first at offset %d); "+
		"records after it are numbered as found, not as written (recfs verify %s lists the damage)\n",
		path, n, Plural(n, "range", "ranges"), first, path)
}

// Plural returns one or many by n.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
