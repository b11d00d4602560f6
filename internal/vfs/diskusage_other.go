//go:build !(linux || darwin || freebsd)

package vfs

import "errors"

func (osFS) DiskUsage(string) (DiskUsage, error) { return DiskUsage{}, errors.ErrUnsupported }
