console.log("service up");
