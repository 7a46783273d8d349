//go:build !linux

package bazil

import "syscall"

// disablePoll only checks that the mount answers: other systems' FUSE has
// no POLL request.
func disablePoll(path string) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		return err
	}
	return syscall.Close(fd)
}
