package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newIndexCmd() *cobra.Command {
	var rebuild bool
	cmd := &cobra.Command{
		Use:   "index FILE",
		Short: "Build or refresh the saved index of a record file",
		Long: `index makes sure the record file has an up-to-date saved index, so that the
next mount, info, ls or cat opens it instantly. An unchanged file's saved
index is reused; a file that grew has only its new tail scanned; a file that
was replaced or shrank is scanned afresh. --rebuild ignores the saved index
and scans the whole file.

Saved indexes live in --cache-dir (default <user cache dir>/recfs, usually
~/.cache/recfs), one small file per source, named after the source's path
and identity. Deleting them is always safe.`,
		Example: `  recfs index events.log
  recfs index --rebuild --cache-dir /var/cache/recfs big.log`,
		Args: cobra.ExactArgs(1),
	}
	src := addSourceFlags(cmd)
	cmd.Flags().BoolVar(&rebuild, "rebuild", false, "ignore a saved index and scan the whole file")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o, err := src.options()
		if err != nil {
			return err
		}
		if src.noCache {
			return usagef("index saves an index: --no-cache makes no sense here")
		}
		o.Rebuild = rebuild
		var changed bool
		t, err := openTable(cmd, args[0], o)
		if err != nil {
			return err
		}
		defer t.Close()
		if !rebuild {
			// The file may have grown since Open looked at it.
			if changed, err = t.Refresh(cmd.Context()); err != nil {
				return err
			}
		}
		inf := t.Info()
		what := "built"
		switch {
		case inf.Source == "cached" && changed:
			what = "refreshed (the file grew or changed)"
		case inf.Source == "cached":
			what = "up to date (loaded from the cache)"
		}
		if wantJSON(cmd) {
			state := "built"
			switch {
			case inf.Source == "cached" && changed:
				state = "refreshed"
			case inf.Source == "cached":
				state = "up_to_date"
			}
			return printJSON(cmd.OutOrStdout(), map[string]any{
				"file": args[0], "index": state, "format": inf.Format.String(), "records": inf.Records,
				"payload_bytes": inf.Bytes, "damaged_ranges": len(t.Damage()), "seconds": inf.BuildTime.Seconds(),
			})
		}
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: index %s: %s, %d records, %d payload bytes, %d damaged ranges, %.3fs\n",
			args[0], what, inf.Format, inf.Records, inf.Bytes, len(t.Damage()), inf.BuildTime.Seconds())
		return err
	}
	return cmd
}
