//go:build linux || darwin || freebsd

package vfs

import "syscall"

func (osFS) DiskUsage(dir string) (DiskUsage, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return DiskUsage{}, err
	}
	bs := int64(st.Bsize)
	return DiskUsage{Total: int64(st.Blocks) * bs, Free: int64(st.Bavail) * bs}, nil
}
