//go:build recfs_lean

package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/open"
)

// leanLink is true in the lean link (tag recfs_lean, the Makefile's
// recfs): main hands command lines that need S3 or .proto schemas to
// recfs-full (see handoff.go), so none reaches the stubs below.
const leanLink = true

// s3Defaults repeat source/s3's (not linked here) for the S3 flags' help.
var s3Defaults = s3DefaultValues{
	connect: 10 * time.Second, firstByte: 30 * time.Second, idle: 30 * time.Second,
	retryBudget: time.Minute, attempts: 4, listMaxPages: 1000,
}

// s3ClientOptions: the lean link has no S3 client to configure.
func s3ClientOptions(*cobra.Command) (open.S3Options, error) { return open.S3Options{}, nil }

// lsS3Prefix: the lean link lists no S3 prefix.
func lsS3Prefix(_ *cobra.Command, url string, _ bool) error {
	return fmt.Errorf("%s: %w", url, open.ErrNotLinked)
}
