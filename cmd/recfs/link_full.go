//go:build !recfs_lean

package main

import (
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/recfs/recfs/fs/nfs"
	netserve "github.com/recfs/recfs/fs/serve"
	"github.com/recfs/recfs/source/httprange"
	"github.com/recfs/recfs/source/s3"
)

// leanLink is false in the full link (recfs-full, and every build without
// the tag recfs_lean): it has S3, .proto schemas and the servers (mount,
// serve), so it runs every command line itself.
const leanLink = false

// The defaults of the S3, HTTP and serve flags: source/s3's,
// source/httprange's, fs/serve's and fs/nfs's.
const (
	s3DefaultConnect      = s3.DefaultConnectTimeout
	s3DefaultFirstByte    = s3.DefaultFirstByteTimeout
	s3DefaultIdle         = s3.DefaultIdleTimeout
	s3DefaultRetryBudget  = s3.DefaultRetryBudget
	s3DefaultAttempts     = s3.DefaultMaxAttempts
	s3DefaultListMaxPages = s3.DefaultListMaxPages
	httpDefaultTimeout    = httprange.DefaultTimeout
	serveDefaultAddr      = netserve.DefaultAddr
	serveDefaultMaxConns  = netserve.DefaultMaxConns
	serveDefaultHTTPIdle  = netserve.DefaultIdleTimeout
	serveDefaultHTTPReq   = netserve.DefaultReadHeaderTimeout
	serveDefaultNFSIdle   = nfs.DefaultIdleTimeout
	serveDefaultNFSReq    = nfs.DefaultRequestTimeout
)

// s3ClientOptions returns the client options of a command's S3 flags.
func s3ClientOptions(cmd *cobra.Command) (s3.Options, error) {
	fl := cmd.Flags()
	var o s3.Options
	if fl.Lookup(flagS3Cache) == nil {
		return o, nil // a command without S3 flags
	}
	o.Endpoint, _ = fl.GetString(flagS3Endpoint)
	o.PathStyle, _ = fl.GetBool(flagS3PathStyle)
	o.Region, _ = fl.GetString(flagS3Region)
	cache, _ := fl.GetString(flagS3Cache)
	n, err := parseSize(cache)
	if err != nil || n < s3.DefaultBlockSize {
		return o, usagef("--%s %q: want a size of at least 1M", flagS3Cache, cache)
	}
	o.CacheBytes = n
	for _, d := range []struct {
		flag string
		to   *time.Duration
	}{{flagS3ConnectTimeout, &o.ConnectTimeout}, {flagS3FirstByteTimeout, &o.FirstByteTimeout},
		{flagS3IdleTimeout, &o.IdleTimeout}, {flagS3RetryBudget, &o.RetryBudget}} {
		if *d.to, _ = fl.GetDuration(d.flag); *d.to <= 0 {
			return o, usagef("--%s %v: want a duration above 0", d.flag, *d.to)
		}
	}
	if o.MaxAttempts, _ = fl.GetInt(flagS3Attempts); o.MaxAttempts < 1 {
		return o, usagef("--%s %d: want at least 1", flagS3Attempts, o.MaxAttempts)
	}
	if o.ListMaxPages, _ = fl.GetInt(flagS3ListMaxPages); o.ListMaxPages < 1 {
		return o, usagef("--%s %d: want at least 1", flagS3ListMaxPages, o.ListMaxPages)
	}
	lb, _ := fl.GetString(flagS3ListMaxBytes)
	if o.ListMaxBytes, err = parseSize(lb); err != nil || o.ListMaxBytes <= 0 {
		return o, usagef("--%s %q: want a size above 0", flagS3ListMaxBytes, lb)
	}
	if logrus.IsLevelEnabled(logrus.DebugLevel) {
		o.SDKLog = cmd.ErrOrStderr() // -v: the SDK's own lines too
	}
	return o, nil
}

// httpOptions returns the client options of a command's HTTP flags.
func httpOptions(cmd *cobra.Command) (httprange.Options, error) {
	var o httprange.Options
	fl := cmd.Flags()
	if fl.Lookup(flagHTTPTimeout) == nil {
		return o, nil
	}
	if o.Timeout, _ = fl.GetDuration(flagHTTPTimeout); o.Timeout <= 0 {
		return o, usagef("--%s %v: want a duration above 0", flagHTTPTimeout, o.Timeout)
	}
	cache, _ := fl.GetString(flagHTTPCache)
	n, err := parseSize(cache)
	if err != nil || n < httprange.DefaultBlockSize {
		return o, usagef("--%s %q: want a size of at least 1M", flagHTTPCache, cache)
	}
	o.CacheBytes = n
	return o, nil
}
