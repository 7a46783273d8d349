package serve

import (
	"errors"
	"net/http"
	"syscall"

	"github.com/recfs/recfs/fs"
)

// HTTPStatus maps an error of the tree to an HTTP status, logging it once
// through t.Report when it is a failure (not a missing name): 404 for a
// name that does not exist or a bad path, 403 for a permission error, 400
// for an invalid request, 503 for a source that changed under the request
// (a retry sees the new one), 500 for everything else (a damaged record, a
// decoder that does not fit, an unreadable source).
func HTTPStatus(t *fs.Tree, err error) int {
	if errors.Is(err, ErrBadPath) {
		return http.StatusNotFound
	}
	switch t.Report(err) {
	case syscall.ENOENT, syscall.ENOTDIR:
		return http.StatusNotFound
	case syscall.EACCES, syscall.EPERM:
		return http.StatusForbidden
	case syscall.EINVAL:
		return http.StatusBadRequest
	case syscall.ESTALE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
