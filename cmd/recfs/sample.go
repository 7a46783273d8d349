package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/recfs/recfs/codec/sample"

	"github.com/spf13/cobra"
)

// writeSampleFile creates dir/name with write and prints its path.
func writeSampleFile(out io.Writer, dir, name string, write func(io.Writer) error) error {
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, path)
	return err
}

func newSampleCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sample DIR",
		Short: "Write small sample record files in every format (for the demo)",
		Long: `sample writes three small record files into DIR (created if missing):
` + sample.LogName + ` (leveldb log of JSON events), ` + sample.RIOName + ` (grailbio recordio with a
header and a trailer) and ` + sample.LegacyName + ` (legacy packed recordio), and
prints their paths. The contents are fixed, so runs are reproducible.`,
		Example: `  recfs sample /tmp/recfs-demo`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, s := range sample.Files {
				if err := writeSampleFile(out, dir, s.Name, s.Write); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
