package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
	"github.com/recfs/recfs/index"
)

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
