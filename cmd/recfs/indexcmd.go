package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/index"
)

// cacheDir returns the directory saved indexes go to for o.
func cacheDir(o index.Options) (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: %w (use --cache-dir)", err)
	}
	return filepath.Join(base, "recfs"), nil
}

// rebuildIndex scans path afresh and replaces its saved index. The index
// package offers no "ignore the saved table" option, so the table is built
// with an empty scratch cache directory (inside the real one, so renames
// stay on one file system) and what the build saved there is moved over the
// old saved index.
func rebuildIndex(cmd *cobra.Command, path string, o index.Options) (*index.Table, error) {
	dir, err := cacheDir(o)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	scratch, err := os.MkdirTemp(dir, ".rebuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	o.CacheDir = scratch
	t, err := openTable(cmd, path, o)
	if err != nil {
		return nil, err
	}
	err = filepath.WalkDir(scratch, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(scratch, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Rename(p, dst)
	})
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("saving the rebuilt index: %w", err)
	}
	return t, nil
}

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
		var changed bool
		var t *index.Table
		if rebuild {
			t, err = rebuildIndex(cmd, args[0], o)
		} else {
			t, err = openTable(cmd, args[0], o)
		}
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
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: index %s: %s, %d records, %d payload bytes, %d damaged ranges, %.3fs\n",
			args[0], what, inf.Format, inf.Records, inf.Bytes, len(t.Damage()), inf.BuildTime.Seconds())
		return err
	}
	return cmd
}
