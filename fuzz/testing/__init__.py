"""What the tests share and nothing else imports (as ``numpy.testing``): the aiter fixtures (a pytest plugin),
the explicit verdict plan of the example tests, the subjects and quantizer probes of the unit tests, fake workers, fresh
interpreters, a scalar spec quantizer, and the skip of a subject this tier cannot run."""
