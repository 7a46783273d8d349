package main

import (
	"bufio"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// catPlain writes the records rs of t as m says. A selection (not every
// record in file order, which one decoder reads through) is read ahead on
// every core: for a compressed file each record decompresses from its own
// checkpoint, so several decompress at once while earlier ones are written
// (index.Table.ReadAhead); the output is the same, in the same order.
func catPlain(cmd *cobra.Command, w *bufio.Writer, t *index.Table, rs []report.Range, all bool, m report.Mode) error {
	recs := report.Records(rs)
	if !all {
		recs = t.ReadAhead(cmd.Context(), recs, runtime.GOMAXPROCS(0))
	}
	return m.WriteSeq(cmd.Context(), w, t, recs)
}
