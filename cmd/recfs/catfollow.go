package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// catFollow is cat --follow: it writes the records of the file (or remote
// object: a new version of it is written again from record 0) at path from
// the selection's start, then every record appended to it, until the
// command's context ends (SIGINT or SIGTERM), when it returns nil. It
// follows through index.Table.Follow, with the rules of a --follow mount.
func catFollow(cmd *cobra.Command, path string, o index.Options, sel []report.Range, m report.Mode,
	dec *decodeFlags, interval time.Duration) error {
	start, last, err := report.FollowStart(sel)
	if err != nil {
		return err
	}
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	report.WarnDamaged(cmd.ErrOrStderr(), path, t.Damage())
	var s *decode.Session
	if dec.decoding() {
		if s, err = catSession(dec, t, path, m.JSON, m.Number); err != nil {
			return err
		}
	}
	f := report.NewFollower(t, path, m, s, cmd.OutOrStdout(), cmd.ErrOrStderr(), start, last)
	return f.Run(cmd.Context(), interval)
}
