//go:build recfs_lean

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
)

// leanLink is true in the lean link (tag recfs_lean, the Makefile's
// recfs): main hands command lines that need S3 or .proto schemas to
// recfs-full (see handoff.go), so none reaches the S3 stubs below; mount
// and serve hand theirs over once parsed (runMountCmd, runServeCmd).
const leanLink = true

// The defaults of the S3, HTTP and serve flags repeat source/s3's,
// source/httprange's, fs/serve's and fs/nfs's (not linked here) for their
// help; the e2e suite checks that both binaries' help agree.
const (
	s3DefaultConnect      = 10 * time.Second
	s3DefaultFirstByte    = 30 * time.Second
	s3DefaultIdle         = 30 * time.Second
	s3DefaultRetryBudget  = time.Minute
	s3DefaultAttempts     = 4
	s3DefaultListMaxPages = 1000
	httpDefaultTimeout    = 30 * time.Second
	serveDefaultAddr      = "127.0.0.1:0"
	serveDefaultMaxConns  = 1024
	serveDefaultHTTPIdle  = 60 * time.Second
	serveDefaultHTTPReq   = 10 * time.Second
	serveDefaultNFSIdle   = 5 * time.Minute
	serveDefaultNFSReq    = 30 * time.Second
)

// runMountCmd hands a parsed `recfs mount` command line (the mount
// helper's too) to recfs-full, which has the FUSE server: it replaces this
// process, so the pid a caller started (systemd's main pid, mount(8)'s
// child) is the server's, or its daemon's parent's.
func runMountCmd(cmd *cobra.Command, _ *mountFlags, _, _ string) error {
	return handOffServer(cmd, "recfs mount")
}

// runServeCmd hands a parsed `recfs serve PROTOCOL` command line to
// recfs-full, which has the servers, as runMountCmd does.
func runServeCmd(cmd *cobra.Command, f *serveFlags, _ string) error {
	return handOffServer(cmd, "recfs serve "+f.proto.name)
}

// s3ClientOptions: the lean link has no S3 client to configure.
func s3ClientOptions(*cobra.Command) (open.S3Options, error) { return open.S3Options{}, nil }

// httpOptions: the lean link has no HTTP client to configure.
func httpOptions(*cobra.Command) (open.HTTPOptions, error) { return open.HTTPOptions{}, nil }

// lsS3Prefix: the lean link lists no S3 prefix.
func lsS3Prefix(_ *cobra.Command, url string, _ bool) error {
	return fmt.Errorf("%s: %w", url, open.ErrNotLinked)
}

// handOffServer hands the parsed command line of cmd, a server (mount or
// serve, named by what) that the lean link leaves out, to recfs-full: the
// original argv, so recfs-full parses it again as given. It returns only
// when it cannot, with the exit status; handOff has told the reason.
func handOffServer(cmd *cobra.Command, what string) error {
	code := handOff(what+" commands", os.Args, cmd.ErrOrStderr())
	return &exitError{code: code, silent: true, err: fmt.Errorf("%s: not handed to %s", what, fullName)}
}
