package mysql

// CloseConn closes the connection with the given id (KILL CONNECTION): its goroutine sees the
// closed socket, ends, and calls Session.Close.
func (s *Server) CloseConn(id uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.id == id {
			c.cancel()
			c.nc.Close()
		}
	}
}
