"""Project configuration: the s.yaml manifest (``manifest``) and runtime settings (``settings``)."""
