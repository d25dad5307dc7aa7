"""What a build writes: file operations for staged and published outputs (``files``), the run manifest
(``manifest``) and the SVG pictures (``pictures``)."""
