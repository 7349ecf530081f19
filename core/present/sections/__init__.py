"""The sections of the HTML report and of ``ragassay serve``'s pages, as data (:mod:`ragassay.present.blocks`)."""
