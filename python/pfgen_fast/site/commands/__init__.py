"""The site room's command, `site`."""
