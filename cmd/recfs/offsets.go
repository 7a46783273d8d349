package main

import (
	"github.com/spf13/cobra"
)

// addOffsetFlag registers --offset: records selected by the number their
// format gives them (Kafka offsets) instead of by record number.
func addOffsetFlag(cmd *cobra.Command) *[]string {
	offs := new([]string)
	cmd.Flags().StringSliceVar(offs, "offset", nil, "select records by Kafka offset: N, A-B (inclusive) or A-; repeat or separate with commas")
	return offs
}
