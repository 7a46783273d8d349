// Command recfs mounts record files (leveldb logs, grailbio recordio) as
// directories with one file per record, and inspects them without FUSE.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{Use: "recfs", Short: "mount record files as directories", SilenceUsage: true}
	for _, f := range extraCommands {
		root.AddCommand(f())
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "recfs:", err)
		os.Exit(1)
	}
}
