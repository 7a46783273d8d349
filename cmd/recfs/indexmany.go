package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// indexMany makes the index command take several files and directories
// (see eachFile): it runs the command's single-file RunE on each file,
// one line each, then prunes once if --prune was given.
func indexMany(cmd *cobra.Command, prune *bool) {
	one := cmd.RunE
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 || singleFile(args) {
			return one(c, args)
		}
		p := *prune
		*prune = false
		err := eachFile(c, args, "", false, func(path string) (fileStatus, error) {
			if err := one(c, []string{path}); err != nil {
				return fileFailed, err
			}
			return fileOK, nil
		})
		*prune = p
		if p && (err == nil || errors.Is(err, errSomeFailed)) {
			if perr := one(c, nil); perr != nil {
				return perr
			}
		}
		return err
	}
}
