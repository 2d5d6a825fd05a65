"""The only package that imports the official Alibaba Cloud SDKs (tests aside)."""
