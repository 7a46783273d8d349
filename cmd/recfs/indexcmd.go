package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// indexFlags are the flags of `recfs index`.
type indexFlags struct {
	src            *sourceFlags
	rebuild, prune bool
	maxCache       string
	maxAge         time.Duration
}

func newIndexCmd() *cobra.Command {
	f := &indexFlags{}
	cmd := &cobra.Command{
		Use:   "index FILE|DIR... | index --prune [FILE|DIR...]",
		Short: "Build or refresh the saved index of a record file",
		Long: `index makes sure the record file has an up-to-date saved index, so that the
next mount, info, ls or cat opens it instantly. An unchanged file's saved
index is reused; a file that grew has only its new tail scanned; a file that
was replaced or shrank is scanned afresh. --rebuild ignores the saved index
and scans the whole file.

Saved indexes live in --cache-dir (default <user cache dir>/recfs, usually
~/.cache/recfs), one small file per source, named after the source's path
and identity; .recfs and "info" name the one a file uses. Deleting them is
always safe.

The cache stays small: saved indexes whose source no longer exists (or is
another file now), indexes unused for --max-age (30 days), and indexes of
other recfs versions are removed, then the least recently used while the
rest take more than --max-cache (1G). This happens at most once a day when
an index is saved, and at once with --prune.

Several files, or a directory (searched recursively for record files),
give one line per file and a summary line; a file that fails is named on
standard error and the others go on (exit status 1 if any failed).`,
		Example: `  recfs index events.log
  recfs index --rebuild --cache-dir /var/cache/recfs big.log
  recfs index --prune --max-cache 200M
  recfs index /var/lib/db        # every log and MANIFEST under it`,
		Args: cobra.ArbitraryArgs,
	}
	f.src = addSourceFlags(cmd)
	cmd.Flags().BoolVar(&f.rebuild, "rebuild", false, "ignore a saved index and scan the whole file")
	cmd.Flags().BoolVar(&f.prune, "prune", false, "prune the cache directory now (after indexing FILE, if given)")
	cmd.Flags().Bool(flagPublish, false, "for s3://bucket/key: upload the saved index next to the object (key"+open.SidecarSuffix+"), where mounts on other machines find it")
	cmd.Flags().StringVar(&f.maxCache, "max-cache", "1G", "with --prune: bytes of saved indexes to keep at most")
	cmd.Flags().DurationVar(&f.maxAge, "max-age", index.DefaultCacheMaxAge, "with --prune: remove saved indexes unused for longer")
	cmd.RunE = runE(f.validate, f.run)
	return cmd
}

// indexRun is what validate makes of index's command line.
type indexRun struct {
	o  index.Options
	po index.PruneOptions
}

// validate checks the command line and returns the index and prune
// options it says.
func (f *indexFlags) validate(cmd *cobra.Command, args []string) (r indexRun, err error) {
	if r.o, err = f.src.options(); err != nil {
		return r, err
	}
	if f.src.noCache {
		return r, usagef("index saves an index: --no-cache makes no sense here")
	}
	if !f.prune && (cmd.Flags().Changed("max-cache") || cmd.Flags().Changed("max-age")) {
		return r, usagef("--max-cache and --max-age go with --prune")
	}
	capBytes, err := parseSize(f.maxCache)
	if err != nil || capBytes == 0 || f.maxAge <= 0 {
		return r, usagef("--max-cache %q / --max-age %v: want sizes and durations above 0", f.maxCache, f.maxAge)
	}
	r.po = index.PruneOptions{MaxBytes: capBytes, MaxAge: f.maxAge}
	if len(args) == 0 && !f.prune {
		return r, usagef("index needs a FILE (or --prune)")
	}
	if len(args) > 0 {
		err = f.checkPublish(cmd, args[0])
	}
	r.o.Rebuild = f.rebuild
	return r, err
}

// checkPublish refuses --publish for a source that is not an S3 object.
func (f *indexFlags) checkPublish(cmd *cobra.Command, path string) error {
	if publish, _ := cmd.Flags().GetBool(flagPublish); publish && open.KindOf(path) != open.S3Object {
		return usagef("--%s goes with an s3://bucket/key source", flagPublish)
	}
	return nil
}

// run indexes the file args names, or each file under them (see eachFile:
// one line each, then a summary), then prunes the cache with --prune (or
// without FILE), also when some files failed.
func (f *indexFlags) run(cmd *cobra.Command, args []string, r indexRun) error {
	var err error
	if singleFile(args) {
		err = f.indexOne(cmd, args[0], r.o)
	} else if len(args) > 0 {
		err = eachFile(cmd, args, "", false, func(path string) (bool, error) {
			if err := f.checkPublish(cmd, path); err != nil {
				return false, err
			}
			return false, f.indexOne(cmd, path, r.o)
		})
	}
	if len(args) > 0 && !f.prune || err != nil && !errors.Is(err, errSomeFailed) {
		return err
	}
	if perr := runPrune(cmd, f.src.cacheDir, r.po); perr != nil {
		return perr
	}
	return err
}

// indexOne builds or refreshes the saved index of path, says so, and
// publishes it when asked.
func (f *indexFlags) indexOne(cmd *cobra.Command, path string, o index.Options) error {
	var changed bool
	t, err := openTable(cmd, path, o)
	if err != nil {
		return err
	}
	defer t.Close()
	if !f.rebuild {
		// The file may have grown since Open looked at it.
		if changed, err = open.Refresh(cmd.Context(), t, path); err != nil {
			return err
		}
	}
	in := report.IndexedOf(path, t, changed)
	if wantJSON(cmd) {
		err = printJSON(cmd.OutOrStdout(), in)
	} else {
		err = in.WriteText(cmd.OutOrStdout())
	}
	if err != nil {
		return err
	}
	if publish, _ := cmd.Flags().GetBool(flagPublish); publish {
		return publishIndex(cmd, path, t.Info().CacheFile)
	}
	return nil
}

// runPrune prunes the cache directory and reports what it did.
func runPrune(cmd *cobra.Command, dir string, o index.PruneOptions) error {
	res, err := index.PruneCache(dir, o)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	if wantJSON(cmd) {
		return printJSON(cmd.OutOrStdout(), report.PrunedOf(res))
	}
	return report.PrunedOf(res).WriteText(cmd.OutOrStdout())
}

// flagPublish is index's --publish: upload the saved index next to an
// s3:// object (see open.SidecarSuffix), where mounts elsewhere find it.
const flagPublish = "publish"

// publishIndex uploads the saved index file cacheFile next to url's object.
func publishIndex(cmd *cobra.Command, url, cacheFile string) error {
	o, err := openOptions(cmd, index.Options{})
	if err != nil {
		return err
	}
	n, err := open.Publish(cmd.Context(), url, cacheFile, o)
	if err != nil {
		return err
	}
	if !wantJSON(cmd) {
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: index published as %s%s (%d bytes)\n", url, url, open.SidecarSuffix, n)
	}
	return err
}
