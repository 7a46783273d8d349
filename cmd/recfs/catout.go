package main

import (
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// catMany writes the records sel of each file in turn, each record labelled
// with its file under --number and --json. A file that fails is named on
// standard error and the others go on; the exit status is then 1.
func catMany(cmd *cobra.Command, files []string, sel []report.Range, offs []report.SeqRange, o index.Options, m report.Mode, dec *decodeFlags) error {
	fails := failures{cmd: cmd}
	for _, f := range files {
		m.Label = f
		if err := fails.add(f, catOne(cmd, f, sel, offs, o, m, dec, false)); err != nil {
			return err
		}
	}
	return fails.result()
}
